window.STAYS = [
  { id: 'ribeira-palace', name: 'Hotel Ribeira Palace', city: 'Porto', price: 189, rating: 9.1, phone: '+351 222 310 500', street: 'Cais da Ribeira 41' },
  { id: 'douro-suites', name: 'Douro Suites', city: 'Porto', price: 112, rating: 8.4, phone: '+351 222 087 664', street: 'Rua das Flores 12' },
  { id: 'casa-do-rio', name: 'Casa do Rio', city: 'Porto', price: 74, rating: 8.8, phone: '+351 222 040 117', street: 'Rua da Reboleira 7' },
  { id: 'aliados-house', name: 'Aliados House', city: 'Porto', price: 96, rating: 7.9, phone: '+351 222 991 302', street: 'Avenida dos Aliados 88' },
  { id: 'alfama-nest', name: 'Alfama Nest', city: 'Lisbon', price: 58, rating: 8.2, phone: '+351 218 870 123', street: 'Beco do Mexias 3' },
  { id: 'tejo-view', name: 'Tejo View Hotel', city: 'Lisbon', price: 143, rating: 8.9, phone: '+351 213 400 980', street: 'Rua do Alecrim 20' },
];
